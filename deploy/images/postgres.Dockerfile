# A stand-in for the public `postgres` image, for a machine without a registry (CI): Debian's PostgreSQL 15
# on the Debian base that deploy/base-image.sh makes, taking the settings compose.yaml gives the public
# image (POSTGRES_USER, POSTGRES_DB, POSTGRES_PASSWORD_FILE; the data in /var/lib/postgresql/data).
ARG BASE_IMAGE=node:22-bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
VOLUME ["/var/lib/postgresql/data"]
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
