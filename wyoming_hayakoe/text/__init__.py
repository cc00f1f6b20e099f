"""The Japanese text front-end (normalizer, G2P, BERT tokenizer), identical to hayakoe 1.3.1.

Import :class:`wyoming_hayakoe.text.frontend.TextFrontend`; this package itself imports nothing,
so that light modules (``symbols``, ``tokenizer``) can be used without loading OpenJTalk.
"""
