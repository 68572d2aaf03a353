"""Path parameters shared by the routers of cluster resources (``/v1/clusters/{cluster}/...``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path

from app.api.examples import CLUSTER_EXAMPLES

ClusterPath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=255,
        description="A configured cluster's name",
        openapi_examples=CLUSTER_EXAMPLES,
    ),
]
