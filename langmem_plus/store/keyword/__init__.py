"""BM25 over postings kept in SQLite, and its in-memory caches."""
