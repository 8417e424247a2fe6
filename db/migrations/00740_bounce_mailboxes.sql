-- +goose Up
-- An account's bounce mailbox: the IMAP mailbox that receives the DSNs, complaint
-- reports and auto-replies sent to the VERP Return-Paths of its smtp senders that
-- have a bounce_domain. One per account: every sender's bounce domain may deliver
-- into it, since the token in the address, not the mailbox, names the send. The
-- password is stored only as AES-GCM ciphertext under the key secret_key_id of
-- SENDONCE_SECRETS_KEY, as sender credentials are, bound to the account.
CREATE TABLE bounce_mailboxes (
    account_id    bigint      PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    host          text        NOT NULL CHECK (length(host) BETWEEN 1 AND 253),
    port          integer     NOT NULL CHECK (port BETWEEN 1 AND 65535),
    security      text        NOT NULL CHECK (security IN ('tls', 'starttls', 'none')),
    username      text        NOT NULL CHECK (length(username) BETWEEN 1 AND 500),
    secret_key_id text        NOT NULL,
    secret        bytea       NOT NULL,
    folder        text        NOT NULL DEFAULT 'INBOX' CHECK (length(folder) BETWEEN 1 AND 200),
    enabled       boolean     NOT NULL DEFAULT true,
    last_poll_at  timestamptz,
    last_error    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bounce_mailboxes_due_idx ON bounce_mailboxes (last_poll_at NULLS FIRST) WHERE enabled;

-- Every mailbox message read, keyed by the SHA-256 of its bytes, with what it was
-- taken for. The insert is the gate of the counts: a message read again after a
-- crash between applying it and deleting it from the mailbox counts once (its
-- bounce or complaint is gated by webhook_events, source 'mailbox').
CREATE TABLE bounce_messages (
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    message_key text        NOT NULL,
    outcome     text        NOT NULL CHECK (outcome IN ('hard_bounce', 'soft_bounce', 'complaint', 'auto_reply',
                                                        'forged', 'foreign', 'unmatched', 'other')),
    send_id     bigint,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, message_key)
);
CREATE INDEX bounce_messages_received_idx ON bounce_messages (received_at);

-- +goose Down
DROP TABLE bounce_messages;
DROP TABLE bounce_mailboxes;
