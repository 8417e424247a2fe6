package segment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/segment"
	"github.com/sendonce/sendonce/internal/testfactory"
)

type fixture struct {
	t    *testing.T
	pool *pgxpool.Pool
	acct int64
	svc  *segment.Service
	make *testfactory.Factory
}

func setup(t *testing.T, timeout time.Duration) fixture {
	t.Helper()
	pool := dbtest.New(t)
	f := fixture{t: t, pool: pool, svc: segment.NewService(pool, timeout), make: testfactory.New(pool)}
	f.acct = f.make.Account(t, "a").ID
	return f
}

func (f fixture) int64(sql string, args ...any) int64 {
	f.t.Helper()
	var n int64
	require.NoError(f.t, f.pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func (f fixture) subscriber(i int, attrs map[string]any) int64 {
	f.t.Helper()
	b, err := json.Marshal(attrs)
	require.NoError(f.t, err)
	return f.make.Subscriber(f.t, f.acct, testfactory.Subscriber{Email: fmt.Sprintf("s%d@example.com", i),
		Status: "confirmed", Attributes: b})
}

// tri is SQL/jsonpath three-valued logic: a predicate is true, false or unknown.
type tri int

const (
	fls tri = iota
	tru
	unknown
)

func and(a, b tri) tri {
	switch {
	case a == fls || b == fls:
		return fls
	case a == tru && b == tru:
		return tru
	}
	return unknown
}

func or(a, b tri) tri {
	switch {
	case a == tru || b == tru:
		return tru
	case a == fls && b == fls:
		return fls
	}
	return unknown
}

func not(a tri) tri {
	switch a {
	case tru:
		return fls
	case fls:
		return tru
	}
	return unknown
}

// pred is a predicate as jsonpath text and as its Go reference evaluation, under
// lax jsonpath rules: a missing key compares false, a comparison of a string with a
// number is unknown, and @@ keeps only true.
type pred struct {
	text string
	eval func(map[string]any) tri
}

func compare(v any, ok bool, lit any, op string) tri {
	if !ok {
		return fls
	}
	switch lv := lit.(type) {
	case string:
		s, isStr := v.(string)
		if !isStr {
			return unknown
		}
		switch op {
		case "==":
			return boolTri(s == lv)
		case "!=":
			return boolTri(s != lv)
		}
	case float64:
		n, isNum := v.(float64)
		if !isNum {
			return unknown
		}
		switch op {
		case ">":
			return boolTri(n > lv)
		case "<=":
			return boolTri(n <= lv)
		case "==":
			return boolTri(n == lv)
		}
	}
	panic("unsupported comparison")
}

func boolTri(b bool) tri {
	if b {
		return tru
	}
	return fls
}

var plans = []string{"pro", "free", "team"}
var tags = []string{"beta", "vip", "eu"}

func randomAtom(r *rand.Rand) pred {
	switch r.IntN(5) {
	case 0, 1:
		p, op := plans[r.IntN(len(plans))], []string{"==", "!="}[r.IntN(2)]
		return pred{fmt.Sprintf(`$.plan %s %q`, op, p), func(a map[string]any) tri {
			v, ok := a["plan"]
			return compare(v, ok, p, op)
		}}
	case 2, 3:
		n, op := float64(r.IntN(20)), []string{">", "<=", "=="}[r.IntN(3)]
		return pred{fmt.Sprintf(`$.seats %s %v`, op, n), func(a map[string]any) tri {
			v, ok := a["seats"]
			return compare(v, ok, n, op)
		}}
	default:
		tag := tags[r.IntN(len(tags))]
		return pred{fmt.Sprintf(`exists($.tags[*] ? (@ == %q))`, tag), func(a map[string]any) tri {
			ts, _ := a["tags"].([]any)
			return boolTri(slices.Contains(ts, any(tag)))
		}}
	}
}

func randomPred(r *rand.Rand, depth int) pred {
	if depth == 0 || r.IntN(3) == 0 {
		return randomAtom(r)
	}
	a, b := randomPred(r, depth-1), randomPred(r, depth-1)
	switch r.IntN(3) {
	case 0:
		return pred{"(" + a.text + " && " + b.text + ")", func(m map[string]any) tri { return and(a.eval(m), b.eval(m)) }}
	case 1:
		return pred{"(" + a.text + " || " + b.text + ")", func(m map[string]any) tri { return or(a.eval(m), b.eval(m)) }}
	}
	return pred{"!(" + a.text + ")", func(m map[string]any) tri { return not(a.eval(m)) }}
}

// randomAttrs draws attributes with missing keys and wrongly typed values, the
// cases where lax jsonpath semantics matter.
func randomAttrs(r *rand.Rand) map[string]any {
	a := map[string]any{}
	switch r.IntN(5) {
	case 0: // missing
	case 1:
		a["plan"] = 5.0
	default:
		a["plan"] = plans[r.IntN(len(plans))]
	}
	switch r.IntN(5) {
	case 0:
	case 1:
		a["seats"] = "many"
	default:
		a["seats"] = float64(r.IntN(20))
	}
	if r.IntN(2) == 0 {
		var ts []any
		for _, t := range tags {
			if r.IntN(2) == 0 {
				ts = append(ts, t)
			}
		}
		a["tags"] = ts
	}
	return a
}

func TestPredicatesMatchAGoReference(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	r := rand.New(rand.NewPCG(15, uint64(time.Now().UnixNano())))
	const n = 300
	attrs := make(map[int64]map[string]any, n)
	for i := range n {
		a := randomAttrs(r)
		// Round-trip through JSON so the reference sees what PostgreSQL stores.
		b, _ := json.Marshal(a)
		var back map[string]any
		require.NoError(t, json.Unmarshal(b, &back))
		attrs[f.subscriber(i, back)] = back
	}
	ctx := context.Background()
	for range 60 {
		p := randomPred(r, 3)
		want := []int64{}
		for id, a := range attrs {
			if p.eval(a) == tru {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		count, sample, err := f.svc.Preview(ctx, f.acct, segment.Filter{Match: p.text}, n)
		require.NoError(t, err, p.text)
		got := make([]int64, len(sample))
		for i, s := range sample {
			got[i] = s.ID
		}
		require.Equal(t, int64(len(want)), count, p.text)
		require.Equal(t, want, got, p.text)
	}
}

func TestMatchIsValidatedByPostgreSQLAndNeverBecomesSQL(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	f.subscriber(1, map[string]any{"plan": "'; DROP TABLE subscribers; --"})
	f.subscriber(2, map[string]any{"plan": "pro"})

	for _, bad := range []string{
		`$.plan == "x"); DROP TABLE subscribers; --`,
		`$.plan == 'pro'`,
		`1 = 1 OR true`,
		`$.plan == "pro"' OR '1'='1`,
		`$.plan == "x" ; SELECT pg_sleep(10)`,
		`$.a like_regex "("`,
		"$.plan == \"a\x00b\"",
		`$.plan ==`,
	} {
		_, err := f.svc.Create(ctx, f.acct, "bad", segment.Filter{Match: bad})
		require.True(t, apperr.Is(err, apperr.Invalid), "%q: %v", bad, err)
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "/match", ae.Fields[0].Pointer, bad)
		_, _, err = f.svc.Preview(ctx, f.acct, segment.Filter{Match: bad}, 10)
		require.True(t, apperr.Is(err, apperr.Invalid), "%q: %v", bad, err)
	}
	// Quotes and SQL inside a jsonpath string literal are data: they match the
	// subscriber whose attribute holds exactly that text.
	g, err := f.svc.Create(ctx, f.acct, "data", segment.Filter{Match: `$.plan == "'; DROP TABLE subscribers; --"`})
	require.NoError(t, err)
	count, sample, err := f.svc.Preview(ctx, f.acct, g.Filter, 10)
	require.NoError(t, err)
	require.Equal(t, int64(1), count)
	require.Equal(t, "s1@example.com", sample[0].Email)
	require.Equal(t, int64(2), f.int64(`SELECT count(*) FROM subscribers`))
	require.Equal(t, int64(1), f.int64(`SELECT count(*) FROM segments`), "refused predicates stored nothing")
}

func TestPathologicalPredicateIsStoppedByTheStatementTimeout(t *testing.T) {
	t.Parallel()
	f := setup(t, 200*time.Millisecond)
	big := make([]int, 3000)
	for i := range big {
		big[i] = i
	}
	f.subscriber(1, map[string]any{"a": big})
	// Three nested scans of a 3,000-element array: 2.7e10 comparisons.
	slow := `exists($.a[*] ? (exists($.a[*] ? (exists($.a[*] ? (@ == -1))))))`
	g, err := f.svc.Create(context.Background(), f.acct, "slow", segment.Filter{Match: slow})
	require.NoError(t, err, "saving only parses the predicate")
	_, _, err = f.svc.Preview(context.Background(), f.acct, g.Filter, 10)
	require.True(t, apperr.Is(err, apperr.Invalid), "%v", err)
	require.Contains(t, err.Error(), "time limit")
	// The connection is usable afterwards: the timeout was local to the transaction.
	var timeout string
	require.NoError(t, f.pool.QueryRow(context.Background(), `SHOW statement_timeout`).Scan(&timeout))
	require.Equal(t, "0", timeout)
}

func TestStructuredFilters(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	a := f.subscriber(1, map[string]any{"plan": "pro"})
	b := f.subscriber(2, map[string]any{"plan": "pro"})
	c := f.subscriber(3, map[string]any{"plan": "pro"})
	_, err := f.pool.Exec(ctx, `UPDATE subscribers SET status = 'pending' WHERE id = $1`, c)
	require.NoError(t, err)
	_, err = f.pool.Exec(ctx, `UPDATE subscribers SET created_at = '2020-01-01' WHERE id = $1`, a)
	require.NoError(t, err)
	l1 := f.make.List(t, f.acct, "l1")
	f.make.Members(t, f.acct, l1, a, b)
	_, err = f.pool.Exec(ctx, `UPDATE list_members SET status = 'unsubscribed' WHERE subscriber_id = $1`, b)
	require.NoError(t, err)

	ids := func(fl segment.Filter) []int64 {
		t.Helper()
		n, sample, err := f.svc.Preview(ctx, f.acct, fl, 10)
		require.NoError(t, err)
		var out []int64
		for _, s := range sample {
			out = append(out, s.ID)
		}
		require.Equal(t, int64(len(out)), n)
		return out
	}
	require.Equal(t, []int64{a, b, c}, ids(segment.Filter{Match: `$.plan == "pro"`}))
	require.Equal(t, []int64{a, b}, ids(segment.Filter{Statuses: []string{"confirmed"}}))
	require.Equal(t, []int64{a}, ids(segment.Filter{ListIDs: []int64{l1}}), "an unsubscribed membership does not count")
	cut := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, []int64{a}, ids(segment.Filter{CreatedBefore: &cut}))
	require.Equal(t, []int64{b, c}, ids(segment.Filter{CreatedAfter: &cut}))

	// Hostile structured input is refused with the field named.
	for _, tc := range []struct {
		f       segment.Filter
		pointer string
	}{
		{segment.Filter{Statuses: []string{"confirmed", "deleted"}}, "/statuses/1"},
		{segment.Filter{ListIDs: []int64{l1, l1 + 1000}}, "/list_ids/1"},
		{segment.Filter{CreatedAfter: &cut, CreatedBefore: &cut}, "/created_before"},
		{segment.Filter{Match: "$.a == \"" + strings.Repeat("x", segment.MaxMatchLen) + "\""}, "/match"},
	} {
		_, err := f.svc.Create(ctx, f.acct, "x", tc.f)
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae)
		require.Equal(t, tc.pointer, ae.Fields[0].Pointer)
	}
	// Another account's list is not found.
	other := f.make.Account(t, "b").ID
	_, err = f.svc.Create(ctx, other, "x", segment.Filter{ListIDs: []int64{l1}})
	require.True(t, apperr.Is(err, apperr.Invalid))
	_, err = f.svc.Get(ctx, other, 1)
	require.True(t, apperr.Is(err, apperr.NotFound))
}

// A jsonpath variable ($x) has no value in a segment: PostgreSQL parses it, but
// evaluating it fails (42704), so a saved one would fail every campaign on it and
// its preview answered 500. It is refused at save and preview, naming match;
// a dollar sign inside a string or a quoted key is data, not a variable.
func TestJsonpathVariablesAreRefusedAtSaveAndPreview(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	f.subscriber(1, map[string]any{"plan": "$x", "$x": 1})

	for _, bad := range []string{
		`$x == 1`,
		`$email == "x"`,
		`$"x" == 1`,
		`$.plan ? (@ == $plan)`,
		`$.a ? (@ like_regex "a" && @ != $"b c")`,
	} {
		_, err := f.svc.Create(ctx, f.acct, "bad", segment.Filter{Match: bad})
		require.True(t, apperr.Is(err, apperr.Invalid), "%q: %v", bad, err)
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "/match", ae.Fields[0].Pointer, bad)
		require.Contains(t, err.Error(), "variable", bad)
		_, _, err = f.svc.Preview(ctx, f.acct, segment.Filter{Match: bad}, 10)
		require.True(t, apperr.Is(err, apperr.Invalid), "%q: %v", bad, err)
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "/match", ae.Fields[0].Pointer, bad)
	}
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM segments`), "refused predicates stored nothing")

	for good, want := range map[string]int64{`$.plan == "$x"`: 1, `$."$x" == 1`: 1, `$.plan == "a\"$x"`: 0} {
		g, err := f.svc.Create(ctx, f.acct, good, segment.Filter{Match: good})
		require.NoError(t, err, good)
		count, _, err := f.svc.Preview(ctx, f.acct, g.Filter, 10)
		require.NoError(t, err, good)
		require.Equal(t, want, count, good)
	}
}

// TestMatchSyntaxErrorSaysWhereInWords: a predicate PostgreSQL cannot parse is
// refused with what is wrong and at which character, in words a person reads,
// not the parser's own text ("syntax error at or near … of jsonpath input").
func TestMatchSyntaxErrorSaysWhereInWords(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	for _, c := range []struct{ match, want string }{
		{`$.plan = "pro"`, `unexpected "=" at character 8`},
		{`$.plan == "pro" &&`, `ends too early, after character 18`},
		{`$.seats > 5a`, `"5a" at character 11 is not a number`},
		{`$.plan == "x")`, `unexpected ")" at character 14`},
	} {
		for _, call := range []func() error{
			func() error { _, err := f.svc.Create(ctx, f.acct, "bad", segment.Filter{Match: c.match}); return err },
			func() error { _, _, err := f.svc.Preview(ctx, f.acct, segment.Filter{Match: c.match}, 10); return err },
		} {
			err := call()
			var ae *apperr.Error
			require.ErrorAs(t, err, &ae, c.match)
			require.Equal(t, "/match", ae.Fields[0].Pointer)
			require.Contains(t, ae.Fields[0].Detail, c.want, c.match)
			require.NotContains(t, ae.Fields[0].Detail, "jsonpath input", c.match)
		}
	}
}
