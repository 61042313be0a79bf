package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"assay"
)

// CreateCondition validates and stores a new condition with its MCP servers.
func (db *DB) CreateCondition(ctx context.Context, c *assay.Condition) error {
	if err := c.Validate(); err != nil {
		return err
	}
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := db.nowText()
	err = tx.QueryRowContext(ctx, `INSERT INTO conditions
		(name, system_prompt, require_mcp_tool_use, require_mcp_tool_success, created_at, updated_at, created_by)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		RETURNING id`, c.Name, c.SystemPrompt, c.RequireMCPToolUse, c.RequireMCPToolSuccess, now, now, Actor(ctx)).Scan(&c.ID)
	if err != nil {
		return conditionWriteError(c.Name, err)
	}
	if err := insertMCPServers(ctx, tx, c.ID, c.MCPServers); err != nil {
		return err
	}
	c.CreatedAt, c.UpdatedAt = parseTime(now), parseTime(now)
	return tx.Commit()
}

// UpdateCondition replaces a condition's fields and MCP servers. Runs keep their
// own snapshots, so an edit never alters a run's record.
func (db *DB) UpdateCondition(ctx context.Context, c *assay.Condition) error {
	if err := c.Validate(); err != nil {
		return err
	}
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := db.nowText()
	res, err := tx.ExecContext(ctx, `UPDATE conditions SET name = ?, system_prompt = ?,
		require_mcp_tool_use = ?, require_mcp_tool_success = ?, updated_at = ? WHERE id = ?`,
		c.Name, c.SystemPrompt, c.RequireMCPToolUse, c.RequireMCPToolSuccess, now, c.ID)
	if err != nil {
		return conditionWriteError(c.Name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("condition %d: %w", c.ID, assay.ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM mcp_servers WHERE condition_id = ?`, c.ID); err != nil {
		return fmt.Errorf("update condition: %w", err)
	}
	if err := insertMCPServers(ctx, tx, c.ID, c.MCPServers); err != nil {
		return err
	}
	c.UpdatedAt = parseTime(now)
	return tx.Commit()
}

// DeleteCondition removes a condition; runs that used it keep their snapshots.
func (db *DB) DeleteCondition(ctx context.Context, id int64) error {
	res, err := db.write.ExecContext(ctx, `DELETE FROM conditions WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete condition: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("condition %d: %w", id, assay.ErrNotFound)
	}
	return nil
}

func conditionWriteError(name string, err error) error {
	if uniqueViolated(err, "conditions", "name") {
		return assay.Errorf(assay.ECONFLICT, "name: a condition named %q already exists", name)
	}
	return fmt.Errorf("write condition: %w", err)
}

func insertMCPServers(ctx context.Context, tx *sql.Tx, conditionID int64, servers []assay.MCPServer) error {
	for i, s := range servers {
		args, _ := json.Marshal(nonNil(s.Args))
		env, _ := json.Marshal(nonNilStrMap(s.Env))
		headers, _ := json.Marshal(nonNilStrMap(s.Headers))
		if _, err := tx.ExecContext(ctx, `INSERT INTO mcp_servers
			(condition_id, position, name, transport, command, args, env, url, headers)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, conditionID, i, s.Name, s.Transport, s.Command,
			string(args), string(env), s.URL, string(headers)); err != nil {
			return fmt.Errorf("insert MCP server %q: %w", s.Name, err)
		}
	}
	return nil
}

// Condition returns one condition with its MCP servers.
func (db *DB) Condition(ctx context.Context, id int64) (*assay.Condition, error) {
	list, err := db.queryConditions(ctx, `WHERE c.id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("condition %d: %w", id, assay.ErrNotFound)
	}
	return &list[0], nil
}

// Conditions lists every condition by name.
func (db *DB) Conditions(ctx context.Context) ([]assay.Condition, error) {
	return db.queryConditions(ctx, ``)
}

func (db *DB) queryConditions(ctx context.Context, where string, args ...any) ([]assay.Condition, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT c.id, c.name, c.system_prompt, c.require_mcp_tool_use,
		c.require_mcp_tool_success, c.created_at, c.updated_at, c.created_by FROM conditions c `+where+` ORDER BY c.name`, args...)
	if err != nil {
		return nil, fmt.Errorf("list conditions: %w", err)
	}
	defer rows.Close()
	var out []assay.Condition
	for rows.Next() {
		var c assay.Condition
		var created, updated string
		if err := rows.Scan(&c.ID, &c.Name, &c.SystemPrompt, &c.RequireMCPToolUse, &c.RequireMCPToolSuccess,
			&created, &updated, &c.CreatedBy); err != nil {
			return nil, fmt.Errorf("scan condition: %w", err)
		}
		c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list conditions: %w", err)
	}
	for i := range out {
		if out[i].MCPServers, err = db.mcpServers(ctx, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (db *DB) mcpServers(ctx context.Context, conditionID int64) ([]assay.MCPServer, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT name, transport, command, args, env, url, headers
		FROM mcp_servers WHERE condition_id = ? ORDER BY position`, conditionID)
	if err != nil {
		return nil, fmt.Errorf("list MCP servers: %w", err)
	}
	defer rows.Close()
	out := []assay.MCPServer{}
	for rows.Next() {
		var s assay.MCPServer
		var args, env, headers string
		if err := rows.Scan(&s.Name, &s.Transport, &s.Command, &args, &env, &s.URL, &headers); err != nil {
			return nil, fmt.Errorf("scan MCP server: %w", err)
		}
		err := errors.Join(json.Unmarshal([]byte(args), &s.Args), json.Unmarshal([]byte(env), &s.Env),
			json.Unmarshal([]byte(headers), &s.Headers))
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: %w", s.Name, err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func nonNilStrMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
