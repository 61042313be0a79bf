-- An answer's turns as the agent counted them (Claude Code's num_turns);
-- 0 when it did not say.
ALTER TABLE results ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
