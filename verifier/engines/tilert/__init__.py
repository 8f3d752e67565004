"""TileRT: the engine's answers (`answers.ENGINE`); its options are data in policies/tilert.yaml."""
