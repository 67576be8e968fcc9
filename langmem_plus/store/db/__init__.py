"""The SQLite truth: the database, its numbered migrations, the change feeds, on-disk term packs."""
