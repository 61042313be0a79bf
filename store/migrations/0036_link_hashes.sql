-- Share and review links are kept as the SHA-256 of their tokens, as access
-- tokens and sessions are: a copy of the database holds no live link. A
-- link is shown once, when it is made. The verdicts given through a review
-- link name it by the same hash.
UPDATE share_links SET token = assay_sha256_hex(token);
ALTER TABLE share_links RENAME COLUMN token TO token_hash;
UPDATE review_links SET token = assay_sha256_hex(token);
ALTER TABLE review_links RENAME COLUMN token TO token_hash;
UPDATE reviews SET link = assay_sha256_hex(link) WHERE link != '';
