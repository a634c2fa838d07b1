"""SSRF guard: which addresses a fetch may connect to.

Every hop (the first request and each redirect) resolves its host once, refuses the request if
*any* address is internal, and then connects to the address that was checked (the URL's host
is replaced by that IP; ``Host`` and TLS SNI keep the name), so DNS cannot answer differently
between the check and the connection (rebinding).

Internal is decided by the address's own properties (Python's ``ipaddress``), never by a list
of ranges typed here, after normalisation:

1. IPv6 forms that carry an IPv4 address are unwrapped and judged by that IPv4 address:
   IPv4-mapped ``::ffff:a.b.c.d``, IPv4-translated ``::ffff:0:a.b.c.d``, IPv4-compatible
   ``::a.b.c.d``, 6to4 ``2002:AABB:CCDD::/48``, NAT64 ``64:ff9b::/96`` (RFC 6052) and Teredo
   (the client address; Teredo is not global in any case). The local-use NAT64 prefix
   ``64:ff9b:1::/48`` (RFC 8215) is internal by definition.
2. Refused: a known cloud metadata endpoint, loopback, link-local, multicast, unspecified,
   site-local (``fec0::/10``), private (RFC 1918, unique-local ``fc00::/7``...), reserved, and
   anything else whose ``is_global`` is false (CGNAT, documentation, benchmarking ranges...).

Allow-list entries (``allow_hosts``) are host names (exact, lower case), IP addresses or CIDR
networks.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from factseek.errors import BlockedAddress, FetchError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Cloud metadata services, refused even if some cloud made them routable.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
METADATA_HOSTS: frozenset[str] = frozenset(
    {
        "metadata.google.internal",
        "metadata",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215 local-use prefix
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765


def embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """``(form, IPv4 address)`` when ``ip`` carries an IPv4 address (see the module doc)."""
    if ip.ipv4_mapped is not None:
        return "ipv4-mapped", ip.ipv4_mapped
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    if ip.teredo is not None:
        return "teredo", ip.teredo[1]
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in NAT64:
        return "nat64", low32
    if ip in _IPV4_TRANSLATED:
        return "ipv4-translated", low32
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:  # not :: or ::1, judged as themselves
        return "ipv4-compatible", low32
    return None


def _own_reason(ip: IPAddress) -> str | None:
    if ip in METADATA_ADDRESSES:
        return "cloud-metadata"
    attrs = ("loopback", "link_local", "multicast", "unspecified", "site_local", "private")
    for attr in attrs:
        if getattr(ip, f"is_{attr}", False):
            return attr.replace("_", "-")
    if ip in NAT64_LOCAL:
        return "nat64-local-use"
    if not ip.is_global:
        return "not-global"
    return None


def blocked_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is internal ("loopback", "private", ...), or None when it is public."""
    if isinstance(ip, ipaddress.IPv6Address):
        wrapped = embedded_ipv4(ip)
        if wrapped is not None:
            form, v4 = wrapped
            reason = _own_reason(v4)
            if reason is not None:
                return reason if form == "ipv4-mapped" else f"{reason} via {form}"
            return "not-global via teredo" if form == "teredo" else None
    if ip in METADATA_ADDRESSES:
        return "cloud-metadata"
    reason = _own_reason(ip)
    if reason == "not-global" and getattr(ip, "is_reserved", False):
        return "reserved"
    return reason


@dataclass(frozen=True)
class AllowList:
    """Hosts and networks the guard lets through."""

    hosts: frozenset[str]
    networks: tuple[IPNetwork, ...]

    @classmethod
    def parse(cls, entries: Sequence[str]) -> AllowList:
        hosts: set[str] = set()
        nets: list[IPNetwork] = []
        for e in entries:
            e = e.strip().lower()
            if not e:
                continue
            try:
                nets.append(ipaddress.ip_network(e.strip("[]"), strict=False))
            except ValueError:
                hosts.add(e)
        return cls(frozenset(hosts), tuple(nets))

    def allows(self, host: str, ip: IPAddress | None = None) -> bool:
        if host.lower() in self.hosts:
            return True
        return ip is not None and any(ip in n for n in self.networks)


NO_ALLOW = AllowList(frozenset(), ())


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


async def resolve_checked(host: str, port: int, allow: AllowList = NO_ALLOW) -> IPAddress:
    """Resolve ``host`` and return the address to connect to; ``BlockedAddress`` if internal.

    Every address the name resolves to must pass (or be allow-listed): a name that resolves to
    one public and one private address is refused.
    """
    host = host.lower().rstrip(".")
    if host in METADATA_HOSTS and not allow.allows(host):
        raise BlockedAddress(f"blocked host {host} (cloud-metadata)")
    literal = _literal(host)
    if literal is not None:
        addresses = [literal]
    else:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as e:
            raise FetchError(f"cannot resolve {host}: {e}") from None
        found = dict.fromkeys(ipaddress.ip_address(i[4][0]) for i in infos)
        addresses = sorted(found, key=lambda a: a.version)  # IPv4 first: IPv6 is often broken
        if not addresses:
            raise FetchError(f"cannot resolve {host}")
    for ip in addresses:
        reason = blocked_reason(ip)
        if reason and not allow.allows(host, ip):
            raise BlockedAddress(f"blocked address {ip} for {host} ({reason})")
    return addresses[0]
