"""Model plumbing the stages share.

- ``nlp``: the spaCy pipeline, loaded once;
- ``encode``: sentence encoders (the ``Encoder`` protocol and its registry);
- ``folder``: the checks of a trained model folder's config.json;
- ``training``: the loop pieces the stance and judge trainers share;
- ``threads``: torch's CPU threads per worker when checks run at once.
"""
