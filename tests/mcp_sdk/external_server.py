#!/usr/bin/env python3
"""An MCP server written with the official Python SDK (PyPI `mcp`, 2.x), for
tests/mcp/mcp_client_mounts_external_servers.rs: agentcore mounts it as an
external server. Tools: a text tool, an image tool, a progress-reporting
tool and a failing tool.
"""

import base64

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

server = MCPServer("sdk-test-server")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def shout(text: str) -> str:
    """Returns the text in capitals."""
    return text.upper()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def pixel() -> Image:
    """Returns a one-pixel PNG."""
    return Image(data=PNG, format="png")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def steps(n: int, ctx: Context) -> str:
    """Reports progress n times."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i} of {n}")
        await anyio.sleep(0.05)
    return f"{n} steps done"


@server.tool()
def explode(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"exploded: {reason}")


if __name__ == "__main__":
    server.run()
