"""Facts derived from an exchange: the chat model's deriver and the precision-first offline rules (Chinese and English)."""
