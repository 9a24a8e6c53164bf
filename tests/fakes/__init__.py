"""HTTP fakes of the services Folio cannot run here (Slack, the Responses API, Azure AI Search).

Each listens on 127.0.0.1 in a background thread, speaks the service's wire format, and is driven by the real SDK.
"""
