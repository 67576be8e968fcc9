"""The SQLite backend: storage, the ranker's reads, rows, writes, maintenance, integrity, the conversation log."""
