# A stand-in for the public `nginx` image, for a machine without a registry (CI): Debian's nginx on the
# Debian base that deploy/base-image.sh makes, reading its sites from /etc/nginx/conf.d as the public image
# does, and logging to the container's output.
ARG BASE_IMAGE=node:22-bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nginx-light \
 && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default \
 && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
