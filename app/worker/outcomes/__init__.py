"""Writing the executor's outcomes back: the writer that writes a sent group's answers as its leaders
answer (``writer``), the write transaction (``transaction``), the audit events it appends (``events``)
and the completion summary made ahead for a large deletion (``summary``)."""
