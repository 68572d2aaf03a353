"""InitProducerId (API 22) for idempotent producers: a new producer id with epoch 0 from any broker.

Kafka's transaction coordinator answers a request without a transactional id by handing out the next id
of its block and epoch 0, whatever id and epoch the producer sent (``TransactionCoordinator.
handleInitProducerId``). Ids count up from 0 across the cluster. Transactions are not emulated: a
transactional id is answered COORDINATOR_NOT_AVAILABLE.

Authorization as ``KafkaApis.handleInitProducerIdRequest``: IDEMPOTENT_WRITE on the cluster, or WRITE on
a topic (the emulator checks its existing topics for the latter).
"""

from __future__ import annotations

import itertools

from kafka_emulator.protocol.api import Authorizer, Handler, Message, RequestContext
from kafka_emulator.protocol.errors import ErrorCode
from kafka_emulator.state import ClusterState

API_KEY = 22
NO_PRODUCER_ID, NO_PRODUCER_EPOCH = -1, -1


def init_producer_id_handler(state: ClusterState, authorizer: Authorizer) -> Handler:
    ids = itertools.count()

    def may_write(ctx: RequestContext) -> bool:
        if authorizer.allowed(ctx, "IDEMPOTENT_WRITE", "CLUSTER", "kafka-cluster"):
            return True
        return any(authorizer.allowed(ctx, "WRITE", "TOPIC", name) for name in state.topics)

    async def handle(ctx: RequestContext, request: Message) -> Message:
        response: Message = {
            "ThrottleTimeMs": 0,
            "ErrorCode": ErrorCode.NONE,
            "ProducerId": NO_PRODUCER_ID,
            "ProducerEpoch": NO_PRODUCER_EPOCH,
        }
        if request.get("TransactionalId") is not None:
            response["ErrorCode"] = ErrorCode.COORDINATOR_NOT_AVAILABLE
        elif not may_write(ctx):
            response["ErrorCode"] = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        else:
            response.update(ProducerId=next(ids), ProducerEpoch=0)
        return response

    return handle
