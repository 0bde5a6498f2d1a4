"""The LLM judge behind llm_judge and agent_identity_consistent.

`prompt` builds what the judge sees, `client` calls the model (Anthropic API or Bedrock) with
its own retry policy, `verdict` parses the forced tool call fail-closed and turns scores into a
verdict with usage and cost.
"""
