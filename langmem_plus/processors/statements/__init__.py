"""The older statement rules (Chinese and English) behind the profile, summaries, reviewer and chit-chat detection."""
