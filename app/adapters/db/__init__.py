"""Database adapter. Importing it registers every table on ``models.Base`` (migrations and drift checks
compare against that metadata)."""

from app.adapters.db import approval_models as approval_models
from app.adapters.db import retention_models as retention_models
from app.adapters.db import webhook_models as webhook_models
