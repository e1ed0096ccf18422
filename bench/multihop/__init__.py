"""Multi-hop retrieval bench: HotpotQA and MuSiQue slices, service against official LightRAG 1.5.7."""
