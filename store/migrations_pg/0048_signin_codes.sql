-- One-time sign-in codes, by the SHA-256 of their secret: the address
-- assay serve and assay token login-url print signs a browser in once,
-- within its time, as name with role; the database holds them so that
-- every server on it takes them. used_at is set by the one use.
CREATE TABLE signin_codes (
    code_hash  TEXT COLLATE "C" PRIMARY KEY,
    name       TEXT COLLATE "C" NOT NULL,
    role       TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    expires_at TEXT COLLATE "C" NOT NULL,
    used_at    TEXT COLLATE "C"
);

-- The addresses the servers on this database were reached at when they
-- last started: assay token login-url prints its address with the latest.
CREATE TABLE server_addresses (
    url        TEXT COLLATE "C" PRIMARY KEY,
    started_at TEXT COLLATE "C" NOT NULL
);
