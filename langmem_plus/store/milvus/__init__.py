"""The Milvus backend (optional extra `[milvus]`): storage and candidate search over Milvus collections."""
