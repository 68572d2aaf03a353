"""Four-eyes approval: rules (``rules``), protected deletions and policies held for approval and the
transitions of their state (``transitions``), approvers' decisions (``decisions``) and expiry
(``expiry``)."""
