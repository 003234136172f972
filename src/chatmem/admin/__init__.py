"""The administrators' console API: users, usage and cost, answer ratings by model, job retry.

Why a package of its own: these reads cut across domains (messages, feedback, users) for the
operators only; every route here depends on ``CurrentAdmin`` (403 for anyone else).
"""
