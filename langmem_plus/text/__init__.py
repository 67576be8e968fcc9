"""Text handling shared by the store and the processors: tokens, symbols, time phrases."""

from langmem_plus.text.symbols import extract_symbols
from langmem_plus.text.tokenize import is_stopword, query_terms, tokenize

__all__ = ["extract_symbols", "is_stopword", "query_terms", "tokenize"]
