"""Network helpers shared by the gateway client, the trace backends, the judge and GitHub."""
