"""The units text is measured and cut in: characters, words, model tokens, tiktoken, sentences, and their indexes."""
