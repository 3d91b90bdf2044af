/** What a test can see of bulk requests without the API: the requests a merchant has stored. */
import type { Db } from 'mongodb';

export const bulkRequestsOf = (db: Db, merchantId: string) => db.collection('bulkRequests').countDocuments({ merchantId });
