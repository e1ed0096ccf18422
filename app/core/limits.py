"""Items per list of a request, where no setting says otherwise: settings may narrow them, never widen them
(app/core/config.py), and every request schema caps its lists with them (app/schemas/common.py)."""

MAX_CHAT_MESSAGES = 10_000  # messages of one chat request (only the latest MAX_HISTORY_MESSAGES are used)
MAX_CONTENT_PARTS = 100  # parts of one OpenAI chat message
MAX_HISTORY_ITEMS = 1_000  # conversation_history; the ceiling of MAX_HISTORY_MESSAGES
MAX_DOCUMENTS_ITEMS = 10_000  # documents or texts of one request; the ceiling of MAX_DOCUMENTS_PER_REQUEST
MAX_IDS = 1_000  # document ids of one deletion, entities of one merge
MAX_KEYWORDS = 64  # hl_keywords / ll_keywords, and a relation's keywords
MAX_ENTITY_TYPES = 100  # a project's entity_types
