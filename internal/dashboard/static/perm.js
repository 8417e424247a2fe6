// What the signed-in session may do: its permissions, as GET /v1/session answers
// them (docs/teams.md's matrix). A page shows a control only when the session
// holds the permission the control's route needs: the API would refuse it, so
// offering it is a trap. The shell sets them at every sign-in.

/** @type {Set<string>} */
let held = new Set();
/** @type {any} */
let current = null;

/** @param {any} s the session answer, or null when signed out */
export function setSession(s) {
  current = s;
  held = new Set((s && s.permissions) || []);
}

/** Whether the session holds permission p (e.g. "campaigns:approve"). @param {string} p */
export function can(p) { return held.has(p); }

/** The signed-in person ({id, email, role, needs_two_factor}), or null for a key's session. */
export function person() { return (current && current.user) || null; }
