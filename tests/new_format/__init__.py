"""A format package as a newcomer writes one, for tests/test_new_format.py: `toy_chat/` is copied
into `compactcli/formats/` of a copy of the package, and registered with one line."""
