"""ATOM: the engine's answers (`answers.ENGINE`); its options are data in policies/atom.yaml."""
