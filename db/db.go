// Package db holds the schema migrations (embedded in the binary) and the SQL queries
// that sqlc turns into internal/store.
package db

import "embed"

// Migrations are the goose migrations, applied by postgres.Migrate.
//
//go:embed migrations/*.sql
var Migrations embed.FS
