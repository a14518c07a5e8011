-- AlterTable
ALTER TABLE "WebhookSource" ADD COLUMN     "githubAppId" TEXT;

-- AddForeignKey
ALTER TABLE "WebhookSource" ADD CONSTRAINT "WebhookSource_tenantId_githubAppId_fkey" FOREIGN KEY ("tenantId", "githubAppId") REFERENCES "GithubApp"("tenantId", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

