package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"assay/store"
	"assay/tally"
	"assay/web"
)

// cmdToken manages named access tokens: create, list, revoke.
func cmdToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "usage: assay token create --name N [--role owner|reviewer|viewer] [--db F]   (the first token is an owner's)\n" +
		"       assay token list [--json] [--db F]\n       assay token revoke NAME [--db F]\n" +
		"       assay token login-url [--db F] [--addr URL]   (a one-time sign-in address for the owner)\n"
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &exitError{code: 2, err: errSilent}
	}
	switch args[0] {
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return nil
	case "create":
		return tokenCreate(ctx, args[1:], stdout, stderr)
	case "list":
		return tokenList(ctx, args[1:], stdout, stderr)
	case "revoke":
		return tokenRevoke(ctx, args[1:], stdout, stderr)
	case "login-url":
		return tokenLoginURL(ctx, args[1:], stdout, stderr)
	}
	return &exitError{code: 2, err: fmt.Errorf("token: unknown command %q (want create, list, revoke or login-url)", args[0])}
}

// tokenLoginURL prints a one-time sign-in address for the owner of the
// servers on a database: it signs a browser in once, within 15 minutes, on
// any of them.
func tokenLoginURL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token login-url", stderr)
	dbPath := dbFlag(fs)
	addr := fs.String("addr", "", "the server's address (default: that of the server that started last on the database)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	base := strings.TrimSuffix(*addr, "/")
	if base == "" {
		if base, err = db.ServerAddress(ctx); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("token login-url: no server has started on %s yet: start assay serve, or give --addr", store.Redacted(*dbPath))}
		}
	} else if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	code, err := db.CreateSigninCode(ctx, web.OwnerName, store.RoleOwner)
	if err != nil {
		return fmt.Errorf("token login-url: %w", err)
	}
	fmt.Fprintf(stdout, "%s/login?code=%s\n", base, code)
	fmt.Fprintln(stderr, "it signs a browser in as the owner once, within 15 minutes")
	return nil
}

func tokenCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token create", stderr)
	name := fs.String("name", "", "whose token: a person or a machine (required)")
	role := fs.String("role", "", "owner (everything), reviewer (read, record review verdicts) or viewer (read only); default: owner for the first token, viewer after")
	dbPath := dbFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" {
		return &exitError{code: 2, err: fmt.Errorf("token create: --name is required")}
	}
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	secret, t, err := db.CreateToken(ctx, *name, store.Role(*role))
	if err != nil {
		return fmt.Errorf("token create: %w", err)
	}
	fmt.Fprintln(stdout, secret)
	fmt.Fprintf(stderr, "token for %s (%s) created: it is shown this once; only its hash is kept\n", t.Name, t.Role)
	return nil
}

// tokenJSON is one token as `assay token list --json` prints it.
type tokenJSON struct {
	Name      string     `json:"name"`
	Role      store.Role `json:"role"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy string     `json:"created_by"`
	LastUsed  *time.Time `json:"last_used"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func tokenList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token list", stderr)
	dbPath := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print a JSON array")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	list, err := db.Tokens(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]tokenJSON, 0, len(list))
		for _, t := range list {
			out = append(out, tokenJSON{Name: t.Name, Role: t.Role, CreatedAt: t.CreatedAt, CreatedBy: t.CreatedBy, LastUsed: t.LastUsed, RevokedAt: t.RevokedAt})
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "name\trole\tcreated\tlast used\tstatus")
	for _, t := range list {
		status, used := "active", "never"
		if t.RevokedAt != nil {
			status = "revoked " + t.RevokedAt.Format("2006-01-02 15:04")
		}
		if t.LastUsed != nil {
			used = t.LastUsed.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Role, t.CreatedAt.Format("2006-01-02 15:04"), used, status)
	}
	return tw.Flush()
}

func tokenRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("token revoke", stderr)
	dbPath := dbFlag(fs)
	// The name may come before the flags or after them (assay token revoke alice --db F).
	names, err := parsePositionals(fs, args)
	if err != nil {
		return err
	}
	if len(names) != 1 {
		return &exitError{code: 2, err: fmt.Errorf("token revoke: name the token: assay token revoke NAME")}
	}
	name := names[0]
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.RevokeToken(ctx, name); err != nil {
		return fmt.Errorf("token revoke: %w", err)
	}
	fmt.Fprintf(stdout, "revoked %s's token; its sessions have ended\n", name)
	return nil
}
