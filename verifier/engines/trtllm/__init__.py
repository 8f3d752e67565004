"""TensorRT-LLM: the engine's answers (`answers.ENGINE`); its options are data in policies/trtllm.yaml."""
