package executor

// ServerSettings are the PostgreSQL settings the executor's own connections start
// with (serve opens its pool with them, and so does the bench).
//
// plan_cache_mode=force_generic_plan: the claim is a large statement (five joins
// and two data-modifying CTEs) whose planning costs about 0.4 ms. Under the
// default (auto) mode PostgreSQL keeps re-planning it on every call whenever the
// statistics make a plan for the actual parameters look cheaper than the generic
// one, which on a 1,000,000-recipient campaign it did for nearly every claim: 18.6 s
// of planning in 45,000 claims, about a sixth of the PostgreSQL CPU per message,
// and the main cost that grew with the audience. Every statement the executor runs
// is shaped for a generic plan (the claim's EXPLAIN test checks it in both modes):
// the parameters name one campaign or a batch of ids, never a value whose
// frequency should change the plan.
var ServerSettings = map[string]string{"plan_cache_mode": "force_generic_plan"}
