"""FAISS per namespace, derived from the stored vectors: index, codec, snapshot, workers."""
