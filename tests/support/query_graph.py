"""A small "Flowers for Algernon" graph shared by the query tests.

With the fake bag-of-words embeddings and cosine_threshold 0.3:
- ll "Charlie Gordon" finds only the entity Charlie Gordon (local);
- hl "mentorship, romance" finds only the relation Alice Kinnian–Charlie Gordon (global), naming neither end;
- the query "How hot was the summer weather?" finds only the weather chunk (naive / mix vector part).
"""

from __future__ import annotations

from tests.support.graph_factory import GraphFactory

THRESHOLD = 0.3

CHUNKS = [
    "Charlie Gordon is a man who takes part in an experiment to raise his intelligence.",
    "Algernon is a laboratory mouse who underwent the same surgery before Charlie.",
    "Alice Kinnian teaches reading at the Beekman school and grows fond of her pupil.",
]
LAB_CHUNKS = [
    "Professor Nemur leads the research and Doctor Strauss performs the surgery.",
    "The weather in the city was hot and humid that summer.",
]
CHARLIE_DESC = "A man with an intellectual disability who undergoes experimental brain surgery."
ROMANCE_DESC = "Alice teaches Charlie to read and later falls in love with him."
MAZE_DESC = "Charlie races against Algernon in maze tests."
WEATHER_QUERY = "How hot was the summer weather?"


def algernon_graph(project_id: str = "default") -> GraphFactory:
    g = GraphFactory(project_id)
    c0, c1, c2 = g.document("doc-novel", "novel.txt", CHUNKS)
    c3, c4 = g.document("doc-lab", "lab.txt", LAB_CHUNKS)
    g.entity("Charlie Gordon", "person", CHARLIE_DESC, [c0, c1])
    g.entity("Algernon", "creature", "A laboratory mouse whose intelligence was raised by the same operation.", [c1])
    g.entity("Alice Kinnian", "person", "Teacher at the Beekman school for slow adults.", [c2])
    g.entity("Nemur", "person", "Professor who leads the research project.", [c3])
    g.relation("Alice Kinnian", "Charlie Gordon", "mentorship, romance", ROMANCE_DESC, [c2])
    g.relation("Algernon", "Charlie Gordon", "rivalry, maze race", MAZE_DESC, [c1])
    g.relation("Algernon", "Nemur", "scientific ownership", "Nemur's team operated on the mouse.", [c3])
    return g
