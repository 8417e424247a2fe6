# Multi-stage: build a static binary, run it as a non-root user on a minimal base.
# .dockerignore keeps the local cluster (.sendonce/), binaries and .git out of the context.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
# The Go SDK is a module of its own (client/), required through a replace: its go.mod
# must be there for the download.
COPY client/go.mod client/go.sum ./client/
RUN go mod download
COPY . .
# The context has no .git (.dockerignore), so neither `git describe` nor Go's VCS stamp
# can name the release here: `make image` passes it in (docker build --build-arg
# VERSION=$(git describe --tags --always --dirty)); `sendonce version` prints it.
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/sendonce ./cmd/sendonce

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sendonce /sendonce
# Required at run time (never baked in): SENDONCE_DATABASE_URL and SENDONCE_UNSUBSCRIBE_SECRET=keyid:secret;
# SENDONCE_SECRETS_KEY too for senders with stored credentials.
ENV SENDONCE_ADDR=:8080 SENDONCE_LOG_FORMAT=json
EXPOSE 8080
USER nonroot:nonroot
# No shell or curl in the image: the binary probes its own /healthz on SENDONCE_ADDR.
# An executor-only container (serve --api=false) has no API listener: give it
# SENDONCE_METRICS_ADDR, whose listener answers /healthz, and point the check there
# (compose.yaml's executor sets SENDONCE_METRICS_ADDR=:9090 and runs
# `/sendonce healthcheck 127.0.0.1:9090`; only its one-shot migrate service disables it).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["/sendonce", "healthcheck"]
ENTRYPOINT ["/sendonce"]
CMD ["serve"]
