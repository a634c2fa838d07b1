"""Network plumbing for the HTTP clients (search providers, fetcher, LLM).

- ``retry``: ``Retry-After`` parsing;
- ``ratelimit``: one request rate and back-off per provider, shared in a process or a Ray
  cluster.
"""
