"""``script/benchmark``: this project against the reference ``hayakoe`` 1.3.1, side by side."""
