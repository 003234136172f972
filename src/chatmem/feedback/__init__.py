"""Feedback: per-message quality ratings (``message_feedback``) and product problem reports
(``user_feedback``, with an optional screenshot stored in the database), plus the admin reader.

Ratings are shared with the seed-000 (docs/specs.md) ``/rpc`` feedback route, which writes the same table
(positive → like, negative → dislike); both upsert on (message_id, user_id), so either API sees
the other's latest write.
"""
