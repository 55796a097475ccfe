"""What the two plain message-list formats (`openai`, `anthropic`) share: the reading both
dialects build on and the writer both use. Not a format of its own.
"""
