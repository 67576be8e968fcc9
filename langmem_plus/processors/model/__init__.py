"""The one structured-output call every processor makes to a chat model, with retries and JSON repair."""
