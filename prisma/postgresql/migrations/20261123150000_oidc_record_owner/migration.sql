-- Records of owners that no longer exist could not satisfy the new foreign key, and open nothing anyway.
DELETE FROM "OidcPayload" WHERE "accountId" IS NOT NULL AND "accountId" NOT IN (SELECT "id" FROM "Owner");

-- AddForeignKey
ALTER TABLE "OidcPayload" ADD CONSTRAINT "OidcPayload_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Owner"("id") ON DELETE CASCADE ON UPDATE CASCADE;

