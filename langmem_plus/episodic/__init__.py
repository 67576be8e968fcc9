"""Episodes are the ground truth; facts are derived from them and superseded, never overwritten (episodes, versions, validity, conversation log, lifecycle)."""
