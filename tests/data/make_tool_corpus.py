"""Write tool_corpus.json: 500 realistic tool definitions and a fixed set of queries.

25 services (GitHub, Slack, Stripe...), each with 5 kinds of object and 4 operations on
them, described the way real MCP servers describe their tools; and 100 queries written
the way a user asks ("open a new ticket in Zendesk"), each naming the tool it should
find. Deterministic: run it again and the file is the same
(``python tests/data/make_tool_corpus.py``). tests/test_tool_search*.py read the file;
benchmarks/tool_search.py too.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

#: service: (title, [(object, plural phrase, {field: description})...])
SERVICES: dict[str, tuple[str, list[tuple[str, str, dict[str, str]]]]] = {
    "github": (
        "GitHub",
        [
            (
                "issue",
                "issues",
                {
                    "repo": "owner/name of the repository",
                    "title": "issue title",
                    "body": "markdown body",
                    "labels": "label names",
                },
            ),
            (
                "pull_request",
                "pull requests",
                {
                    "repo": "owner/name of the repository",
                    "head": "branch with the changes",
                    "base": "branch to merge into",
                },
            ),
            (
                "repository",
                "repositories",
                {"owner": "user or organisation", "visibility": "public or private"},
            ),
            (
                "release",
                "releases",
                {"repo": "owner/name", "tag": "git tag of the release", "notes": "release notes"},
            ),
            (
                "workflow_run",
                "CI workflow runs",
                {"repo": "owner/name", "workflow": "workflow file name", "branch": "git branch"},
            ),
        ],
    ),
    "slack": (
        "Slack",
        [
            (
                "message",
                "messages",
                {
                    "channel": "channel id or #name",
                    "text": "message text",
                    "thread_ts": "thread to reply in",
                },
            ),
            ("channel", "channels", {"name": "channel name", "is_private": "private channel"}),
            (
                "reaction",
                "emoji reactions",
                {"channel": "channel id", "timestamp": "message timestamp", "emoji": "emoji name"},
            ),
            (
                "user_group",
                "user groups",
                {"handle": "group mention handle", "users": "member user ids"},
            ),
            ("reminder", "reminders", {"text": "what to remind about", "time": "when to remind"}),
        ],
    ),
    "jira": (
        "Jira",
        [
            (
                "ticket",
                "tickets",
                {
                    "project": "project key",
                    "summary": "ticket summary",
                    "priority": "priority level",
                    "assignee": "assigned user",
                },
            ),
            (
                "sprint",
                "sprints",
                {"board": "agile board id", "goal": "sprint goal", "start": "start date"},
            ),
            ("epic", "epics", {"project": "project key", "name": "epic name"}),
            ("worklog", "time tracking worklogs", {"ticket": "ticket key", "hours": "hours spent"}),
            ("board", "agile boards", {"project": "project key", "type": "scrum or kanban"}),
        ],
    ),
    "gmail": (
        "Gmail",
        [
            (
                "email",
                "emails",
                {
                    "to": "recipient addresses",
                    "subject": "email subject",
                    "body": "email body",
                    "attachments": "files to attach",
                },
            ),
            ("draft", "draft emails", {"to": "recipient addresses", "subject": "subject line"}),
            ("label", "mailbox labels", {"name": "label name", "color": "label colour"}),
            (
                "filter",
                "inbox filters",
                {"from": "sender to match", "action": "what to do with matching mail"},
            ),
            (
                "thread",
                "conversation threads",
                {"query": "Gmail search query", "max_results": "how many"},
            ),
        ],
    ),
    "calendar": (
        "Google Calendar",
        [
            (
                "event",
                "calendar events",
                {
                    "calendar": "calendar id",
                    "start": "start time",
                    "end": "end time",
                    "attendees": "guest emails",
                    "location": "meeting place",
                },
            ),
            ("calendar", "calendars", {"summary": "calendar name", "timezone": "IANA time zone"}),
            (
                "availability",
                "free/busy availability",
                {"attendees": "people to check", "start": "from", "end": "until"},
            ),
            (
                "invitation",
                "meeting invitations",
                {"event": "event id", "response": "accept, decline or tentative"},
            ),
            (
                "reminder",
                "event reminders",
                {"event": "event id", "minutes_before": "minutes before the event"},
            ),
        ],
    ),
    "drive": (
        "Google Drive",
        [
            (
                "file",
                "files",
                {"name": "file name", "folder": "parent folder id", "mime_type": "MIME type"},
            ),
            ("folder", "folders", {"name": "folder name", "parent": "parent folder id"}),
            (
                "permission",
                "sharing permissions",
                {
                    "file": "file id",
                    "email": "person to share with",
                    "role": "reader, commenter or writer",
                },
            ),
            ("revision", "file revisions", {"file": "file id"}),
            ("comment", "document comments", {"file": "file id", "content": "comment text"}),
        ],
    ),
    "notion": (
        "Notion",
        [
            (
                "page",
                "pages",
                {
                    "parent": "parent page or database",
                    "title": "page title",
                    "content": "page blocks",
                },
            ),
            ("database", "databases", {"parent": "parent page", "schema": "property definitions"}),
            (
                "database_row",
                "database rows",
                {"database": "database id", "properties": "row property values"},
            ),
            (
                "block",
                "content blocks",
                {"page": "page id", "type": "paragraph, heading, to_do..."},
            ),
            ("workspace_member", "workspace members", {"email": "member email"}),
        ],
    ),
    "stripe": (
        "Stripe",
        [
            (
                "payment",
                "payments",
                {
                    "amount": "amount in cents",
                    "currency": "ISO currency code",
                    "customer": "customer id",
                },
            ),
            ("customer", "customers", {"email": "customer email", "name": "customer name"}),
            (
                "subscription",
                "subscriptions",
                {"customer": "customer id", "price": "price id", "trial_days": "free trial length"},
            ),
            ("invoice", "invoices", {"customer": "customer id", "due_date": "payment due date"}),
            (
                "refund",
                "refunds",
                {"payment": "payment id", "amount": "amount to refund in cents", "reason": "why"},
            ),
        ],
    ),
    "salesforce": (
        "Salesforce",
        [
            (
                "lead",
                "sales leads",
                {"company": "company name", "email": "contact email", "source": "lead source"},
            ),
            (
                "opportunity",
                "sales opportunities",
                {"account": "account id", "stage": "sales stage", "amount": "deal size"},
            ),
            ("account", "customer accounts", {"name": "account name", "industry": "industry"}),
            (
                "contact",
                "contacts",
                {"account": "account id", "email": "email", "phone": "phone number"},
            ),
            ("report", "CRM reports", {"folder": "report folder", "filters": "report filters"}),
        ],
    ),
    "zendesk": (
        "Zendesk",
        [
            (
                "support_ticket",
                "support tickets",
                {
                    "requester": "customer email",
                    "subject": "ticket subject",
                    "priority": "urgent, high, normal or low",
                },
            ),
            ("macro", "support macros", {"title": "macro title", "actions": "what the macro does"}),
            ("agent", "support agents", {"email": "agent email", "group": "agent group"}),
            (
                "satisfaction_rating",
                "customer satisfaction ratings",
                {"score": "good or bad", "ticket": "ticket id"},
            ),
            (
                "help_article",
                "help center articles",
                {
                    "section": "help center section",
                    "title": "article title",
                    "body": "article body",
                },
            ),
        ],
    ),
    "postgres": (
        "PostgreSQL",
        [
            (
                "query",
                "SQL queries",
                {
                    "sql": "SQL statement to run",
                    "parameters": "bound parameters",
                    "database": "database name",
                },
            ),
            ("table", "tables", {"schema": "schema name", "columns": "column definitions"}),
            ("index", "table indexes", {"table": "table name", "columns": "indexed columns"}),
            ("role", "database roles", {"name": "role name", "privileges": "granted privileges"}),
            (
                "backup",
                "database backups",
                {"database": "database name", "destination": "where to store the dump"},
            ),
        ],
    ),
    "s3": (
        "Amazon S3",
        [
            ("bucket", "storage buckets", {"name": "bucket name", "region": "AWS region"}),
            (
                "object",
                "stored objects",
                {"bucket": "bucket name", "key": "object key", "content_type": "MIME type"},
            ),
            (
                "presigned_url",
                "presigned download URLs",
                {"bucket": "bucket name", "key": "object key", "expires_in": "seconds valid"},
            ),
            (
                "lifecycle_rule",
                "bucket lifecycle rules",
                {"bucket": "bucket name", "expire_after_days": "days before expiry"},
            ),
            (
                "bucket_policy",
                "bucket access policies",
                {"bucket": "bucket name", "policy": "JSON policy document"},
            ),
        ],
    ),
    "kubernetes": (
        "Kubernetes",
        [
            ("pod", "pods", {"namespace": "namespace", "label_selector": "label selector"}),
            (
                "deployment",
                "deployments",
                {
                    "namespace": "namespace",
                    "replicas": "number of replicas",
                    "image": "container image",
                },
            ),
            ("service", "cluster services", {"namespace": "namespace", "port": "service port"}),
            ("secret", "secrets", {"namespace": "namespace", "data": "secret key/values"}),
            ("node", "cluster nodes", {"label_selector": "label selector"}),
        ],
    ),
    "docker": (
        "Docker",
        [
            (
                "container",
                "containers",
                {"image": "image to run", "ports": "port mappings", "env": "environment variables"},
            ),
            ("image", "container images", {"tag": "image tag", "dockerfile": "Dockerfile path"}),
            ("volume", "volumes", {"name": "volume name", "driver": "volume driver"}),
            ("network", "networks", {"name": "network name", "subnet": "subnet CIDR"}),
            (
                "container_log",
                "container logs",
                {"container": "container id", "tail": "last N lines"},
            ),
        ],
    ),
    "weather": (
        "Weather",
        [
            (
                "forecast",
                "weather forecasts",
                {"city": "city name", "days": "days ahead", "units": "metric or imperial"},
            ),
            (
                "current_conditions",
                "current weather conditions",
                {"latitude": "latitude", "longitude": "longitude"},
            ),
            (
                "alert",
                "severe weather alerts",
                {"region": "region or state", "severity": "minimum severity"},
            ),
            ("air_quality", "air quality readings", {"zip_code": "postal code"}),
            (
                "historical_weather",
                "historical weather records",
                {"city": "city name", "date": "past date"},
            ),
        ],
    ),
    "maps": (
        "Maps",
        [
            (
                "route",
                "driving directions routes",
                {
                    "origin": "start address",
                    "destination": "end address",
                    "mode": "driving, walking, transit",
                },
            ),
            ("place", "places of interest", {"query": "what to look for", "near": "location"}),
            ("geocode", "address geocodes", {"address": "street address"}),
            (
                "distance_matrix",
                "travel distances",
                {"origins": "start points", "destinations": "end points"},
            ),
            (
                "timezone",
                "time zones of locations",
                {"latitude": "latitude", "longitude": "longitude"},
            ),
        ],
    ),
    "spotify": (
        "Spotify",
        [
            ("playlist", "playlists", {"name": "playlist name", "public": "visible to others"}),
            ("track", "songs", {"query": "song or artist", "market": "country code"}),
            ("playback", "music playback", {"device": "device id", "uri": "what to play"}),
            ("album", "albums", {"artist": "artist name"}),
            ("podcast_episode", "podcast episodes", {"show": "podcast show id"}),
        ],
    ),
    "twitter": (
        "X (Twitter)",
        [
            (
                "post",
                "posts (tweets)",
                {"text": "post text", "reply_to": "post to reply to", "media": "media ids"},
            ),
            ("follower", "followers", {"user": "user handle"}),
            ("direct_message", "direct messages", {"recipient": "user handle", "text": "message"}),
            ("trend", "trending topics", {"location": "where"}),
            ("bookmark", "bookmarked posts", {"post": "post id"}),
        ],
    ),
    "shopify": (
        "Shopify",
        [
            (
                "product",
                "store products",
                {"title": "product title", "price": "price", "inventory": "stock quantity"},
            ),
            (
                "order",
                "store orders",
                {"customer": "customer id", "status": "open, closed, cancelled"},
            ),
            (
                "discount_code",
                "discount codes",
                {"code": "coupon code", "percent_off": "percentage off"},
            ),
            (
                "fulfillment",
                "order fulfillments (shipping)",
                {"order": "order id", "tracking_number": "carrier tracking number"},
            ),
            ("collection", "product collections", {"title": "collection title"}),
        ],
    ),
    "hubspot": (
        "HubSpot",
        [
            (
                "deal",
                "deals",
                {"pipeline": "deal pipeline", "stage": "deal stage", "amount": "deal amount"},
            ),
            ("company", "companies", {"domain": "company website domain", "name": "company name"}),
            (
                "marketing_email",
                "marketing email campaigns",
                {"subject": "subject", "audience": "contact list"},
            ),
            ("form_submission", "form submissions", {"form": "form id"}),
            ("note", "CRM notes", {"record": "record id", "body": "note text"}),
        ],
    ),
    "trello": (
        "Trello",
        [
            ("card", "cards", {"list": "list id", "name": "card name", "due": "due date"}),
            ("list", "board lists", {"board": "board id", "name": "list name"}),
            ("checklist", "card checklists", {"card": "card id", "items": "checklist items"}),
            ("label", "card labels", {"board": "board id", "color": "label colour"}),
            ("attachment", "card attachments", {"card": "card id", "url": "link to attach"}),
        ],
    ),
    "dropbox": (
        "Dropbox",
        [
            ("file", "files", {"path": "Dropbox path", "mode": "add or overwrite"}),
            ("shared_link", "shared links", {"path": "Dropbox path", "expires": "link expiry"}),
            ("folder", "folders", {"path": "folder path"}),
            (
                "file_request",
                "file requests",
                {"title": "request title", "destination": "folder to receive files"},
            ),
            ("team_member", "team members", {"email": "member email"}),
        ],
    ),
    "twilio": (
        "Twilio",
        [
            (
                "sms",
                "SMS text messages",
                {"to": "phone number", "body": "message text", "from_number": "sender number"},
            ),
            ("call", "phone calls", {"to": "phone number", "twiml": "call instructions"}),
            ("phone_number", "phone numbers", {"area_code": "area code", "country": "country"}),
            (
                "verification",
                "phone verification codes",
                {"to": "phone number", "channel": "sms or call"},
            ),
            ("recording", "call recordings", {"call": "call id"}),
        ],
    ),
    "sentry": (
        "Sentry",
        [
            (
                "error_issue",
                "application errors (issues)",
                {"project": "project slug", "status": "resolved, unresolved, ignored"},
            ),
            ("release_health", "release health stats", {"release": "release version"}),
            (
                "alert_rule",
                "alert rules",
                {"project": "project slug", "conditions": "when to alert"},
            ),
            ("stack_trace", "error stack traces", {"event": "event id"}),
            (
                "project",
                "monitored projects",
                {"team": "team slug", "platform": "python, javascript..."},
            ),
        ],
    ),
    "datadog": (
        "Datadog",
        [
            (
                "metric",
                "time series metrics",
                {"query": "metrics query", "from_ts": "start", "to_ts": "end"},
            ),
            ("monitor", "monitors", {"query": "monitor query", "threshold": "alert threshold"}),
            ("dashboard", "dashboards", {"title": "dashboard title", "widgets": "widgets"}),
            ("log_search", "log searches", {"query": "log query", "index": "log index"}),
            ("incident", "incidents", {"title": "incident title", "severity": "SEV-1..SEV-5"}),
        ],
    ),
}

#: operation: (description template, the verbs a user may say instead)
OPERATIONS: dict[str, tuple[str, list[str]]] = {
    "list": (
        "List all {plural} in {title}: shows every one, newest first, with optional filters.",
        ["list", "show all", "list my"],
    ),
    "get": (
        "Get one {one} from {title} by its id, with all its details.",
        ["get", "look up", "get details of"],
    ),
    "create": (
        "Create a new {one} in {title}. Returns the created {one}.",
        ["create", "make a new", "add a new"],
    ),
    "delete": (
        "Delete a {one} from {title} permanently (remove it).",
        ["delete", "remove", "delete the"],
    ),
}
#: the operations each object gets (5 objects x 4 operations = 20 tools per service)
PLANS = [("list", "get", "create", "delete")] * 5


def one(plural: str) -> str:
    """A plural phrase in the singular, roughly ("sales leads" -> "sales lead")."""
    head, _, rest = plural.partition(" (")
    word = head[:-1] if head.endswith("s") and not head.endswith("ss") else head
    return word + (f" ({rest}" if rest else "")


def tools() -> list[dict[str, object]]:
    corpus = []
    for service, (title, objects) in SERVICES.items():
        for (name, plural, fields), operations in zip(objects, PLANS, strict=True):
            for operation in operations:
                template, _ = OPERATIONS[operation]
                properties: dict[str, object] = {}
                if operation in ("get", "delete"):
                    properties["id"] = {"type": "string", "description": f"the {one(plural)}'s id"}
                else:
                    for field, description in fields.items():
                        properties[field] = {"type": "string", "description": description}
                if operation == "list":
                    properties["limit"] = {"type": "integer", "description": "page size"}
                corpus.append(
                    {
                        "service": service,
                        "name": f"{operation}_{name}",
                        "description": template.format(plural=plural, one=one(plural), title=title),
                        "inputSchema": {
                            "type": "object",
                            "properties": properties,
                            "required": ["id"] if "id" in properties else [],
                        },
                    }
                )
    return corpus


def queries(corpus: list[dict[str, object]], count: int = 100) -> list[dict[str, str]]:
    rng = random.Random(28)
    chosen = rng.sample(corpus, count)
    asked = []
    for tool in chosen:
        service = str(tool["service"])
        title, objects = SERVICES[service]
        operation, _, obj = str(tool["name"]).partition("_")
        plural = next(p for n, p, _ in objects if n == obj)
        verb = rng.choice(OPERATIONS[operation][1])
        thing = plural if operation == "list" else one(plural)
        thing = thing.partition(" (")[0]
        where = rng.choice([f"in {title}", f"on {title}", f"{title}:"])
        query = f"{where} {verb} {thing}" if where.endswith(":") else f"{verb} {thing} {where}"
        asked.append({"query": query, "expect": f"{service}_{tool['name']}"})
    return asked


def main() -> None:
    corpus = tools()
    assert len(corpus) == 500, len(corpus)
    data = {"tools": corpus, "queries": queries(corpus)}
    path = Path(__file__).with_name("tool_corpus.json")
    path.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
