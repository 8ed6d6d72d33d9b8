#!/usr/bin/env python3
"""python-zeroconf anchors for Scripts/bench rows 1, 2 and 8 (run in the bench venv, on a LAN host).

usage: zeroconf-anchor.py publish NAME ADDRESS PORT       register one service until SIGTERM
       zeroconf-anchor.py register-many COUNT PREFIX ADDRESS   register COUNT at once until SIGTERM
       zeroconf-anchor.py browse                          print '+ NAME' / '- NAME' as services come and go
       zeroconf-anchor.py connect NAME                    resolve NAME, connect, send a byte, wait for the first bytes

Every line on stdout is flushed at once; JSON lines match svc-bench's ("phase": ...).
"""
import asyncio
import json
import signal
import socket
import sys
import time

from zeroconf import ServiceBrowser, ServiceInfo, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncZeroconf

TYPE = "_p2pipp._tcp.local."


def info(name, address, port):
    return ServiceInfo(TYPE, f"{name}.{TYPE}", addresses=[socket.inet_aton(address)], port=port,
                       server=f"zc-{socket.gethostname()}-{port}.local.")


async def until_terminated():
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    await stop.wait()


async def register(infos):
    zeroconf = AsyncZeroconf()
    start = time.monotonic()
    # async_register_service returns once the service is queued; awaiting what it returns waits
    # for probing and announcing. All at once, as the other anchors do.
    pending = await asyncio.gather(*(zeroconf.async_register_service(each) for each in infos))
    await asyncio.gather(*pending)
    print(json.dumps({"phase": "registered", "services": len(infos), "milliseconds": int((time.monotonic() - start) * 1000)}),
          flush=True)
    await until_terminated()
    await zeroconf.async_unregister_all_services()
    await zeroconf.async_close()


def browse():
    def changed(zeroconf, service_type, name, state_change):
        mark = {ServiceStateChange.Added: "+", ServiceStateChange.Removed: "-"}.get(state_change)
        if mark:
            print(f"{mark} {name[:-len(service_type) - 1]}", flush=True)

    zeroconf = Zeroconf()
    ServiceBrowser(zeroconf, TYPE, handlers=[changed])
    signal.sigwait([signal.SIGTERM, signal.SIGINT])
    zeroconf.close()


def connect(name):
    zeroconf = Zeroconf()
    found = ServiceInfo(TYPE, f"{name}.{TYPE}")
    if not found.request(zeroconf, 3000):
        print(f"zeroconf-anchor: {name} not found", file=sys.stderr)
        return 68
    address = found.parsed_addresses()[0]
    with socket.create_connection((address, found.port), timeout=3) as stream:
        stream.sendall(b"\0")  # the first byte of a version 1 frame: the server answers only then
        stream.recv(1)
    zeroconf.close()
    return 0


def main(args):
    if args[:1] == ["publish"] and len(args) == 4:
        asyncio.run(register([info(args[1], args[2], int(args[3]))]))
    elif args[:1] == ["register-many"] and len(args) == 4:
        asyncio.run(register([info(f"{args[2]}-{i}", args[3], 4242 + i % 1000) for i in range(int(args[1]))]))
    elif args == ["browse"]:
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM, signal.SIGINT])
        browse()
    elif args[:1] == ["connect"] and len(args) == 2:
        return connect(args[1])
    else:
        print(__doc__, file=sys.stderr)
        return 64
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
