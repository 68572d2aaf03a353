"""KIP-11 ACLs for the emulator: the binding store, the broker authorizer and the *Acls handlers."""

from kafka_emulator.acls.handlers import register_acl_handlers
from kafka_emulator.acls.model import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType
from kafka_emulator.acls.store import AclStore

__all__ = [
    "AclBinding",
    "AclFilter",
    "AclStore",
    "Operation",
    "PatternType",
    "Permission",
    "ResourceType",
    "register_acl_handlers",
]
