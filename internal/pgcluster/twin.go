package pgcluster

import (
	"context"
	"fmt"
	neturl "net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Twin creates an empty database on the cluster of url (a postgres:// URL), named
// after url's database with suffix, and returns a URL to it and a function that
// drops it. A twin of the same name left by an earlier run is dropped first.
// The role needs CREATEDB. `sendonce bench --grow` measures on two.
func Twin(ctx context.Context, url, suffix string) (string, func(), error) {
	u, err := neturl.Parse(url)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("a second database needs the first's address as a postgres:// URL")
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		name = u.User.Username() // libpq's default database
	}
	twin := name + suffix
	ident := pgx.Identifier{twin}.Sanitize()
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return "", nil, err
	}
	if err := exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", nil, err
	}
	t := *u
	t.Path = "/" + twin
	t.RawPath = ""
	drop := func() { _ = exec(context.Background(), "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)") }
	return t.String(), drop, nil
}
